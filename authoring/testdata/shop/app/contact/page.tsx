"use client";

export default function Contact() {
  return (
    <main>
      <h1>Contact us</h1>
      <form>
        <label>
          Email <input name="email" type="email" required />
        </label>
        <button type="submit">Send</button>
      </form>
    </main>
  );
}
